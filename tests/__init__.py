"""The Python test suite of tcplab; its modules mirror the package."""
