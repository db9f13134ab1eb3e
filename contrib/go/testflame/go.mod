module testflame.dev/contrib/testflame

go 1.19
