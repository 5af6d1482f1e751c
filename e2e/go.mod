module podline.dev/e2e

go 1.26
