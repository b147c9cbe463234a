"""remem.store"""
