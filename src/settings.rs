//! Flags + environment + .speed/config.toml resolved once into Settings.
