"""remem.commands"""
