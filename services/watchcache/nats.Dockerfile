# podline/nats: nats-server built from its Go module (tools/nats, `make
# tools`), FROM scratch. JetStream keeps the apiserver's watch stream in
# /data, a volume in compose.
FROM scratch
COPY nats-server /usr/local/bin/nats-server
EXPOSE 4222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
CMD ["-js", "-sd", "/data", "-m", "8222"]
