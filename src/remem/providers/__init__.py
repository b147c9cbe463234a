"""Providers of models remem can use (embedders); :mod:`~remem.providers.embed` is
public for those who plug in their own embedder."""
