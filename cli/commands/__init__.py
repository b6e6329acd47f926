"""The commands, a module per topic: each declares its commands with ``register(app)`` and
``cli.main.MODULES`` names which commands each module declares, so a command line builds only
the module of the command it names."""
