current = 0


def getDevice():
    return current
