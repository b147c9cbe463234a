"""remem.formation"""
