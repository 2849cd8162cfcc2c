<?php
/**
 * Under php-fpm the browser gets its response before the webhook is sent
 * (fastcgi_finish_request), even when the purger is slow.
 */
class FastCgiDeliveryTest extends VE_TestCase {

	public function test_response_is_flushed_before_a_slow_purger_answers() {
		$socket = Environment::start_fpm();
		$mu     = Environment::$wp . '/wp-content/mu-plugins';
		if ( ! is_dir( $mu ) ) {
			mkdir( $mu );
		}
		// A front-end request that edits a post (as an editor saving would), then ends normally.
		file_put_contents(
			$mu . '/edit-endpoint.php',
			"<?php add_action( 'init', function () { if ( isset( \$_GET['ve_edit'] ) ) { wp_update_post( array( 'ID' => (int) \$_GET['ve_edit'], 'post_content' => 'fpm ' . microtime( true ) ) ); echo 'edited'; exit; } } );"
		);
		Environment::receiver_delay( 1 );
		try {
			$id       = self::$ids['golf'];
			$start    = microtime( true );
			$response = FastCgiClient::request(
				$socket,
				array(
					'GATEWAY_INTERFACE' => 'FastCGI/1.0',
					'REQUEST_METHOD'    => 'GET',
					'SCRIPT_FILENAME'   => Environment::$wp . '/index.php',
					'SCRIPT_NAME'       => '/index.php',
					'REQUEST_URI'       => '/?ve_edit=' . $id,
					'QUERY_STRING'      => 've_edit=' . $id,
					'DOCUMENT_ROOT'     => Environment::$wp,
					'SERVER_NAME'       => '127.0.0.1',
					'SERVER_PORT'       => (string) Environment::$wp_port,
					'HTTP_HOST'         => Environment::site(),
					'SERVER_PROTOCOL'   => 'HTTP/1.1',
					'REMOTE_ADDR'       => '127.0.0.1',
				)
			);
			$this->assertSame( 'edited', $response['body'], $response['headers'] );
			$this->assertNotNull( $response['end'] );

			// The webhook goes out after the response.
			$deadline = microtime( true ) + 30;
			while ( ! Environment::webhooks() && microtime( true ) < $deadline ) {
				usleep( 200000 );
			}
			$hooks = Environment::webhooks();
			$this->assertCount( 1, $hooks );
			$this->assertSame( 202, $hooks[0]['status'] );
			$this->assertTrue( $hooks[0]['signature_ok'] );
			$this->assertContains( $this->key( "p-$id" ), $hooks[0]['body']['events'][0]['tags'] );
			$this->assertLessThan( $hooks[0]['received_at'], $start + $response['end'], 'the browser had the whole response before the webhook was sent' );
			$this->assertSame( 0, \VarnishEdge\Plugin::instance()->outbox->stats()['rows'], 'delivered, nothing left in the outbox' );
		} finally {
			unlink( $mu . '/edit-endpoint.php' );
			Environment::receiver_status( 0 );
		}
	}
}
