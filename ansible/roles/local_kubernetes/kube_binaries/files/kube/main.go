// Command kube is every Kubernetes component the local cluster runs, in one
// binary: link time dominates the build, so one link instead of six. The
// component is chosen by the name it is called under (symlinks) or by the first
// argument: `kube kubelet --config ...`.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
	_ "time/tzdata" // CronJob time zones, as the upstream mains do
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kube-proxy":              proxy.NewProxyCommand,
	"kubelet":                 kubelet.NewKubeletCommand,
}

func main() {
	name := filepath.Base(os.Args[0])
	if _, known := components[name]; !known && name != "kubectl" && len(os.Args) > 1 {
		name = os.Args[1]
		os.Args = os.Args[1:]
	}
	if name == "kubectl" {
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	}
	newCommand, known := components[name]
	if !known {
		fmt.Fprintf(os.Stderr, "usage: kube <kube-apiserver|kube-controller-manager|kube-scheduler|kube-proxy|kubelet|kubectl> [flags]\n")
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
