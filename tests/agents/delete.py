import shutil
import sys

shutil.rmtree(sys.argv[2])
print("Removed the kernel")
