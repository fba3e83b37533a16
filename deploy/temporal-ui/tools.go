//go:build tools

package tools

import _ "github.com/temporalio/ui-server/v2/cmd/server"
