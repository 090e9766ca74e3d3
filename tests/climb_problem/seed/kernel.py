WIDTH = 2  # @tune WIDTH: 1 2 4 8 16 32
