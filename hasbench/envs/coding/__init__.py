"""The Coding domain: a repository workspace, a bubblewrap sandbox and hidden tests."""

from hasbench.envs.coding.environment import CodingEnvironment

__all__ = ["CodingEnvironment"]
