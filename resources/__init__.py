"""Plain resource files (icons, stylesheets, demo texts) shipped with the package."""
