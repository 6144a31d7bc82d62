graph [
  directed 1
  node [ id 0 label "tls" title "TLS" type "CONCEPT" ]
  node [ id 1 label "tcp" title "TCP" ]
  edge [ source 0 target 1 type "RUNS_OVER" weight 2 ]
]
