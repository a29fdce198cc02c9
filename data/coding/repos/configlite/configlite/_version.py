__version__ = "1.5.3"
