// Command kubectl is the upstream kubectl, built from k8s.io/kubectl at the
// version pinned in this module's go.mod.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		// Print the error the way kubectl does and exit non-zero.
		util.CheckErr(err)
	}
}
