"""Runners for engines that can run on this machine: start them, talk to them, always stop them."""
