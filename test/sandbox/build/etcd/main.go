// Command etcd runs etcd's server from the module proxy; go install cannot
// build it directly because etcd's go.mod carries replace directives.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
