"""What listens on a socket: the built-in CallSim assistant and its protocol endpoints."""
