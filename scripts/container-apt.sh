#!/bin/sh
# apt-get install during an image build (Dockerfile), without starting the services the
# packages bring: a policy-rc.d that refuses every start stands for the install's
# duration (one already there is left alone), and the package lists go afterwards.
#
#   scripts/container-apt.sh PACKAGE|./FILE.deb ...
set -eu

policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    policy=1
fi
apt-get update
apt-get install -y -qq --no-install-recommends "$@"
rm -rf /var/lib/apt/lists/*
if [ -n "$policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
