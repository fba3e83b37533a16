module agent-sessions/ui-server-build

go 1.26.10

require (
	github.com/temporalio/ui-server/v2 v2.58.1
	go.temporal.io/api v1.64.3
)
