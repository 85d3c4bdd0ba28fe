module @leaky attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf64>, %arg1: tensor<f64>) -> (tensor<2xf64>) {
    %0 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("if_else.py":7:8)
    %4 = "stablehlo.reduce"(%arg0, %0) ({
      ^bb0(%b1: tensor<f64>, %b2: tensor<f64>):
        %r3 = "stablehlo.add"(%b1, %b2) : (tensor<f64>, tensor<f64>) -> tensor<f64> loc("if_else.py":7:8)
        "stablehlo.return"(%r3) : (tensor<f64>) -> () loc("if_else.py":7:8)
      }) {dimensions = array<i64: 0>} : (tensor<2xf64>, tensor<f64>) -> tensor<f64> loc("if_else.py":7:8)
    %5 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("if_else.py":7:8)
    %6 = "stablehlo.compare"(%4, %5) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f64>, tensor<f64>) -> tensor<i1> loc("if_else.py":7:8)
    %7 = "stablehlo.convert"(%6) : (tensor<i1>) -> tensor<i32> loc("if_else.py":7:5)
    %21 = "stablehlo.case"(%7) ({
        %8 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("if_else.py":9:10)
        %12 = "stablehlo.reduce"(%arg0, %8) ({
          ^bb0(%b9: tensor<f64>, %b10: tensor<f64>):
            %r11 = "stablehlo.add"(%b9, %b10) : (tensor<f64>, tensor<f64>) -> tensor<f64> loc("if_else.py":9:10)
            "stablehlo.return"(%r11) : (tensor<f64>) -> () loc("if_else.py":9:10)
          }) {dimensions = array<i64: 0>} : (tensor<2xf64>, tensor<f64>) -> tensor<f64> loc("if_else.py":9:10)
        %13 = "stablehlo.constant"() {value = dense<"0x000000000000F0BF"> : tensor<f64>} : () -> tensor<f64> loc("if_else.py":9:10)
        %14 = "stablehlo.compare"(%12, %13) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f64>, tensor<f64>) -> tensor<i1> loc("if_else.py":9:10)
        %15 = "stablehlo.convert"(%14) : (tensor<i1>) -> tensor<i32> loc("if_else.py":9:5)
        %20 = "stablehlo.case"(%15) ({
            %16 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("if_else.py":12:13)
            %17 = "stablehlo.broadcast_in_dim"(%16) {broadcast_dimensions = array<i64>} : (tensor<f64>) -> tensor<2xf64> loc("if_else.py":12:13)
            "stablehlo.return"(%17) : (tensor<2xf64>) -> () loc("if_else.py":9:5)
          }, {
            %18 = "stablehlo.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64>} : (tensor<f64>) -> tensor<2xf64> loc("if_else.py":10:13)
            %19 = "stablehlo.multiply"(%arg0, %18) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> loc("if_else.py":10:13)
            "stablehlo.return"(%19) : (tensor<2xf64>) -> () loc("if_else.py":9:5)
          }) : (tensor<i32>) -> tensor<2xf64> loc("if_else.py":9:5)
        "stablehlo.return"(%20) : (tensor<2xf64>) -> () loc("if_else.py":7:5)
      }, {
        "stablehlo.return"(%arg0) : (tensor<2xf64>) -> () loc("if_else.py":7:5)
      }) : (tensor<i32>) -> tensor<2xf64> loc("if_else.py":7:5)
    "func.return"(%21) : (tensor<2xf64>) -> ()
  }
}
