"""ptas-sandbox: a stateful simulator and a conformance harness for the Payment Transactions Aggregation Service."""

__version__ = "0.1.0"
