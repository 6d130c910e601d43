package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfSigned is a certificate for 127.0.0.1, as an operator's own CA
// would issue for the Mac's name.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mlx-otelcol test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// With TLS the API and /metrics are HTTPS only: a key or a prompt never
// crosses the LAN in clear text, and a plain-HTTP client gets no answer.
func TestTheFrontDoorSpeaksTLS(t *testing.T) {
	var e recordingEngine
	cert := selfSigned(t)
	r := rigWithUpstream(t, e.handler, served(func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}))
	pool := x509.NewCertPool()
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	pool.AddCert(leaf)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	https := strings.Replace(r.url, "http://", "https://", 1)

	resp, err := client.Post(https+chatPath, "application/json", strings.NewReader(`{"messages": [{"role": "user", "content": "x"}]}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotNil(t, resp.TLS)
	resp, err = client.Get(https + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	plain, err := http.Get(r.url + "/health")
	if err == nil {
		plain.Body.Close()
		assert.NotEqual(t, http.StatusOK, plain.StatusCode, "plain HTTP is not served")
	}
	assert.Len(t, e.seen(), 1)
}
