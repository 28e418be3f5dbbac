// Command etcd is upstream etcd's server main; it lives in a module of our own
// because go.etcd.io/etcd/server/v3 has replace directives that `go install` refuses.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
