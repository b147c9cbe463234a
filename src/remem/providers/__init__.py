"""remem.providers"""
