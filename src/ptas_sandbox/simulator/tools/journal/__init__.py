"""The request journal of each world: what every API and control call sent and got back."""
