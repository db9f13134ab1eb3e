import sys
sys.stderr.write("user site\n")
