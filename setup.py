# Everything is in pyproject.toml. scrapyd-deploy builds the egg with `python setup.py bdist_egg`
# and, finding no setup.py, writes one of its own into the checkout: this one is here instead.
from setuptools import setup

setup()
