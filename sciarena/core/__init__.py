"""What every stage shares, and nothing else: the typed records that pass between stages (types), every
error a user can meet with a message fit to show (errors), the settings read once from the environment
(settings: the only module that reads the environment), Unicode hygiene (text) and atomic, resumable files (files).

In: nothing from the package. Out: records, errors and settings for every other stage.
"""
