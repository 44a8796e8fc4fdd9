# The x86_64 guest's stderr (vm.sh, vng --verbose): the kernel console and
# the guest command's stderr arrive mixed on one pipe. Kernel lines (the
# "[ secs.usecs] " prefix, and the boot stub's lines) go to the file klog,
# and to stderr only when verbose is set; every other line passes to stderr.
#
# QEMU writes the serial console a byte at a time and the command's stderr
# from another thread, so a kernel line can follow a line the command had
# not ended yet ("...fallback to 9p[    8.79] Kernel panic - ..."). Such a
# line goes to stderr whole, and its kernel part from the prefix on to
# klog as well: a panic is seen wherever its line starts.
/^\[ *[0-9]+\.[0-9]+\] / || /^(early console|input_data|input_len|output|output_len|kernel_total_size|needed_size|trampoline_32bit|Decompressing|Booting the kernel)/ {
	print >> klog; fflush(klog)
	if (verbose == "") next
}
match($0, /\[ *[0-9]+\.[0-9]+\] /) && RSTART > 1 {
	print substr($0, RSTART) >> klog; fflush(klog)
}
{ print > "/dev/stderr"; fflush("/dev/stderr") }
