module github.com/edgelimit/edgelimit/envoy

go 1.26.0

replace github.com/edgelimit/edgelimit => ../

require (
	github.com/edgelimit/edgelimit v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/kr/pretty v0.3.1 // indirect
	github.com/rogpeppe/go-internal v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
)
