"""What only development needs of the site itself: the sample pages the linter checks."""
