"""remem.testing"""
