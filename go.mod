module github.com/sessionpipe/sessionpipe

go 1.26.8

require (
	github.com/segmentio/encoding v0.5.4
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/segmentio/asm v1.1.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.0.0-20211110154304-99a53858aa08 // indirect
)
