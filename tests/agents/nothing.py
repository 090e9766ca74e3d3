print("I looked and changed nothing")
