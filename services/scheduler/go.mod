module podline.dev/services/scheduler

go 1.26
