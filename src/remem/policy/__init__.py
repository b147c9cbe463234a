"""remem.policy"""
