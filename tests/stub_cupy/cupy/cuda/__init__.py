from cupy.cuda import runtime


class Device:
    def __init__(self, index=0):
        self.index = index

    def use(self):
        runtime.current = self.index
