"""remem.recall"""
