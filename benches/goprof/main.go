// A real profile for the replay workloads: a small Go service-like
// program (JSON, regexp, gzip, SHA-256, sort, text/template, big-number
// work on four goroutines, each call under pprof labels) that profiles
// itself with Go's own runtime/pprof, so that the profile's functions,
// files, mappings and labels are those of a real runtime and standard
// library, not strtab's simulator. Not built by CI; needs a Go toolchain
// (Debian's golang-go 1.19 was used):
//
//	go run benches/goprof/main.go /tmp/cpu.pprof /tmp/allocs.pprof
//	STRTAB_PPROF=/tmp/cpu.pprof taskset -c 1 target/release/deps/profile-HASH rounds 15 replay-pprof
//
// It runs for 20 seconds and writes a CPU profile sampled at 1 kHz (Go
// prints a warning that the rate was set before StartCPUProfile: that is
// how a rate above its default 100 Hz is set) and an allocation profile.
// The profiles are not in the repository; benches/README.md gives the
// figures measured on them.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
)

type Item struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
	Score float64           `json:"score"`
}

var sink interface{}

func jsonWork(n int) {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{ID: i, Name: "item-" + strconv.Itoa(i), Tags: []string{"a", "b", strconv.Itoa(i % 7)},
			Attrs: map[string]string{"k": strconv.Itoa(i), "color": "blue"}, Score: float64(i) * 1.5}
	}
	b, _ := json.Marshal(items)
	var out []Item
	_ = json.Unmarshal(b, &out)
	sink = out
}

var re = regexp.MustCompile(`([a-z]+)-(\d+)@([a-z.]+)`)

func regexWork(n int) {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "user%d name-%d@example.org ", i, i)
	}
	sink = re.FindAllStringSubmatch(sb.String(), -1)
}

func gzipWork(n int) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "line %d of some fairly repetitive text %d\n", i, i*i)
	}
	w.Close()
	r, _ := gzip.NewReader(&buf)
	var out bytes.Buffer
	out.ReadFrom(r)
	sink = out.Len()
}

func shaWork(n int) {
	data := make([]byte, 4096)
	for i := 0; i < n; i++ {
		data[i%4096] ^= byte(i)
		s := sha256.Sum256(data)
		sink = s
	}
}

func sortWork(n int) {
	xs := make([]string, n)
	for i := range xs {
		xs[i] = strconv.Itoa((i * 7919) % n)
	}
	sort.Strings(xs)
	sink = xs
}

var tmpl = template.Must(template.New("t").Parse(`{{range .}}<li>{{.Name}} ({{.Score}}){{range .Tags}} #{{.}}{{end}}</li>{{end}}`))

func templateWork(n int) {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Name: "n" + strconv.Itoa(i), Tags: []string{"x", "y"}, Score: float64(i)}
	}
	var buf bytes.Buffer
	tmpl.Execute(&buf, items)
	sink = buf.Len()
}

func bigWork(n int) {
	f := big.NewInt(1)
	for i := 1; i < n; i++ {
		f.Mul(f, big.NewInt(int64(i)))
	}
	sink = f.String()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run benches/goprof/main.go CPU.pprof ALLOCS.pprof")
		os.Exit(2)
	}
	cpu, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.SetCPUProfileRate(1000)
	pprof.StartCPUProfile(cpu)
	runtime.MemProfileRate = 4096
	deadline := time.Now().Add(20 * time.Second)
	work := []struct {
		name string
		f    func(int)
		n    int
	}{{"json", jsonWork, 2000}, {"regex", regexWork, 2000}, {"gzip", gzipWork, 5000},
		{"sha", shaWork, 2000}, {"sort", sortWork, 20000}, {"template", templateWork, 2000}, {"big", bigWork, 800}}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				w := work[(i+g)%len(work)]
				labels := pprof.Labels("endpoint", "/api/"+w.name, "worker", strconv.Itoa(g), "tenant", "t"+strconv.Itoa(i%13))
				pprof.Do(context.Background(), labels, func(context.Context) { w.f(w.n) })
			}
		}(g)
	}
	wg.Wait()
	pprof.StopCPUProfile()
	cpu.Close()
	heap, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pprof.Lookup("allocs").WriteTo(heap, 0)
	heap.Close()
}
