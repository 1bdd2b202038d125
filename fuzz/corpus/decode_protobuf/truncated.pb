
d
