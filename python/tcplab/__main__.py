"""`python -m tcplab` runs the command line, like the `tcplab` script."""

from .cli import main

main()
