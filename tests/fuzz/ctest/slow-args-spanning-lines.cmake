add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(x "
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
add_test(y [==[
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
subdirs("
