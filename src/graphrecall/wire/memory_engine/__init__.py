"""The Memory Engine face's methods: params models, handlers and result shapes."""
