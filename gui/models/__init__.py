"""Thin QAbstractItemModel adapters over the plain state objects."""
