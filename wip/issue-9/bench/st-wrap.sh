#!/bin/bash
bash /work/main/lab/guest/selftests.sh "$@"
dmesg > /tmp/h5/st-4/dmesg-full.txt
