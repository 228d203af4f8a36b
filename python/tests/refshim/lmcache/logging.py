"""Test shim: what the reference reader imports from lmcache.logging."""
import logging


def init_logger(name):
    return logging.getLogger(name)
