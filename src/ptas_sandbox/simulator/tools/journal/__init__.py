"""The request journal of each world (issue 13): what every API and control call sent and got back."""
