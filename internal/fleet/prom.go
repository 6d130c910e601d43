package fleet

import (
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Collector serves a role's series from a client_golang registry (the
// proxy's). It reports nothing before the role's Start.
type Collector struct {
	a                                 *Agent
	up, info, uptime, restarts, crash *prometheus.Desc
}

// NewCollector returns the collector of a's series.
func NewCollector(a *Agent) *Collector {
	rn := []string{LabelRole, LabelNode}
	return &Collector{
		a:        a,
		up:       prometheus.NewDesc(MetricUp, HelpUp, rn, nil),
		info:     prometheus.NewDesc(MetricInfo, HelpInfo, append(rn, LabelVersion, LabelCommit, LabelModel, LabelModelPath), nil),
		uptime:   prometheus.NewDesc(MetricUptime, HelpUptime, rn, nil),
		restarts: prometheus.NewDesc(MetricRestarts, HelpRestarts, rn, nil),
		crash:    prometheus.NewDesc(MetricCrashes, HelpCrashes, rn, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.info, c.uptime, c.restarts, c.crash} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.a.Snapshot(time.Now())
	if !s.Started {
		return
	}
	up := 0.0
	if s.Up {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, s.Role, s.Node)
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, s.Role, s.Node, s.Version, s.Commit, s.Model, s.ModelPath)
	ch <- prometheus.MustNewConstMetric(c.uptime, prometheus.GaugeValue, s.Uptime.Seconds(), s.Role, s.Node)
	ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(s.Restarts), s.Role, s.Node)
	ch <- prometheus.MustNewConstMetric(c.crash, prometheus.CounterValue, float64(s.Crashes), s.Role, s.Node)
}

// WithNode is g with a node label on every series that has none, so that
// a scrape says which node it came from whoever scrapes it.
func WithNode(g prometheus.Gatherer, node string) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if hasLabel(m, LabelNode) {
					continue
				}
				m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(LabelNode), Value: proto.String(node)})
				sort.Slice(m.Label, func(i, j int) bool { return m.Label[i].GetName() < m.Label[j].GetName() })
			}
		}
		return mfs, err
	})
}

func hasLabel(m *dto.Metric, name string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return true
		}
	}
	return false
}
